"""Finite fields GF(q), q = p^k, as lookup tables, for the algebraic topologies.

Elements are the integers 0..q-1. For k > 1 an element's base-p digits are the
coefficients of a polynomial over GF(p) (digit i multiplies x^i), reduced modulo the
lexicographically smallest monic irreducible polynomial of degree k. For a prime q
this is ordinary arithmetic modulo q. Fields used by topologies are small (q < a few
hundred), so full q x q tables are cheap and keep the builders vectorised.
"""
from __future__ import annotations

import dataclasses
import functools
import itertools

import numpy as np


def prime_power(q: int) -> tuple[int, int] | None:
    """(p, k) with q = p^k for a prime p, or None when q is not a prime power."""
    if q < 2:
        return None
    p = next(d for d in itertools.count(2) if q % d == 0 or d * d > q)
    if q % p:
        p = q  # no divisor up to sqrt(q): q is prime
    k = 0
    while q % p == 0:
        q //= p
        k += 1
    return (p, k) if q == 1 else None


@dataclasses.dataclass(frozen=True, eq=False)
class GaloisField:
    """GF(q) with addition, negation and multiplication tables.

    Attributes:
      q: field size p^k.  p: characteristic.  k: extension degree.
      add, mul: int32 [q, q] tables.  neg: int32 [q] additive inverses.
    """

    q: int
    p: int
    k: int
    add: np.ndarray
    mul: np.ndarray
    neg: np.ndarray

    @functools.cached_property
    def primitive_element(self) -> int:
        """The smallest generator of the multiplicative group (order q - 1), verified."""
        for g in range(1, self.q):
            if self.multiplicative_order(g) == self.q - 1:
                return g
        raise AssertionError(f"GF({self.q}) has no primitive element: bad field tables")

    def multiplicative_order(self, x: int) -> int:
        """Smallest n >= 1 with x^n = 1."""
        if x == 0:
            raise ValueError("0 has no multiplicative order")
        power, n = x, 1
        while power != 1:
            power, n = int(self.mul[power, x]), n + 1
        return n

    def powers(self, x: int) -> np.ndarray:
        """int32 [q - 1] of x^0, x^1, ..., x^(q-2)."""
        out = np.empty(self.q - 1, np.int32)
        out[0] = 1
        for i in range(1, self.q - 1):
            out[i] = self.mul[out[i - 1], x]
        return out


@functools.lru_cache(maxsize=None)
def galois_field(q: int) -> GaloisField:
    """GF(q) for a prime power q (ValueError otherwise)."""
    pk = prime_power(q)
    if pk is None:
        raise ValueError(f"q={q!r} is invalid: must be a prime power")
    p, k = pk
    digits = _digits(np.arange(q), p, k)  # [q, k], digit i = coefficient of x^i
    add = _from_digits((digits[:, None, :] + digits[None, :, :]) % p, p)
    modulus = _smallest_irreducible(p, k)
    mul = _from_digits(_poly_mul_mod(digits[:, None, :], digits[None, :, :], modulus, p), p)
    neg = _from_digits((-digits) % p, p)
    return GaloisField(q=q, p=p, k=k, add=add, mul=mul, neg=neg)


def _digits(values: np.ndarray, p: int, k: int) -> np.ndarray:
    return np.stack([(values // p**i) % p for i in range(k)], axis=-1)


def _from_digits(digits: np.ndarray, p: int) -> np.ndarray:
    weights = p ** np.arange(digits.shape[-1])
    return (digits * weights).sum(axis=-1).astype(np.int32)


def _poly_mul_mod(a: np.ndarray, b: np.ndarray, modulus: np.ndarray, p: int) -> np.ndarray:
    """Coefficient arrays (..., k) times (..., k) modulo the monic `modulus` (k + 1 coeffs)."""
    k = a.shape[-1]
    shape = np.broadcast_shapes(a.shape, b.shape)[:-1]
    prod = np.zeros(shape + (2 * k - 1,), np.int64)
    for i in range(k):
        for j in range(k):
            prod[..., i + j] += a[..., i] * b[..., j]
    prod %= p
    for top in range(2 * k - 2, k - 1, -1):  # cancel x^top with x^(top-k) * modulus
        lead = prod[..., top : top + 1]
        prod[..., top - k : top + 1] -= lead * modulus
        prod %= p
    return prod[..., :k]


def _smallest_irreducible(p: int, k: int) -> np.ndarray:
    """Monic irreducible polynomial of degree k over GF(p), coefficients low to high."""
    if k == 1:
        return np.array([0, 1])
    for low in itertools.product(range(p), repeat=k):
        candidate = np.array(low[::-1] + (1,))
        if not any(_divides(divisor, candidate, p) for divisor in _monic_polys(p, k // 2)):
            return candidate
    raise AssertionError(f"no irreducible polynomial of degree {k} over GF({p})")


def _monic_polys(p: int, max_degree: int):
    for degree in range(1, max_degree + 1):
        for low in itertools.product(range(p), repeat=degree):
            yield np.array(low + (1,))


def _divides(divisor: np.ndarray, poly: np.ndarray, p: int) -> bool:
    """Whether monic `divisor` divides `poly` over GF(p) (coefficients low to high)."""
    rest = poly.copy() % p
    d = len(divisor) - 1
    for top in range(len(rest) - 1, d - 1, -1):
        rest[top - d : top + 1] = (rest[top - d : top + 1] - rest[top] * divisor) % p
    return not rest[:d].any()
