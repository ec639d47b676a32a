"""The packet record: one int32 row of `N_FIELDS` fields. Buffers hold rows, so moving a
packet is one row gather and one row scatter whatever a routing scheme stores in it.
Routing schemes read and write the routing fields (SRC .. CLASS_HOPS); the engine owns the
timing fields. When a packet's head reached its buffer and when its slot frees belong to
the buffer slot, not to the packet: they live beside the records (`Rings.ready`,
`Rings.free_at`), where the phases that read them every cycle find 4 bytes per slot
instead of a record's cache line."""
from __future__ import annotations

DST = 0  # destination server
DST_R = 1  # destination router
CREATED = 2  # cycle the packet was generated
INJECTED = 3  # cycle its head entered the first router
HOPS = 4  # router-to-router hops taken so far
SRC = 5  # source router
MID = 6  # intermediate router (Valiant family), -1 if none
PHASE = 7  # routing phase
PATH = 8  # path id (source routing) or per-packet random word
CLASS_HOPS = 9  # hops on links of class >= 1 (Dragonfly: global) in the current phase
ENTERS_RING = 10  # 1 if the hop it is making enters a ring (bubble flow control), else 0
N_FIELDS = 11

# Fields of a source-queue entry.
Q_DST, Q_DST_R, Q_CREATED = 0, 1, 2
N_QUEUE_FIELDS = 3
