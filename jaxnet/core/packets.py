"""The packet record: one int32 row of `N_FIELDS` fields. Buffers hold rows, so moving a
packet is one row gather and one row scatter whatever a routing scheme stores in it.
Routing schemes read and write the routing fields (SRC .. CLASS_HOPS); the engine owns the
timing fields. When a slot frees after its packet left belongs to the buffer slot, not to
the packet: it lives beside the records (`Rings.free_at`), where the releases and the
credit counts read it every cycle without touching the records."""
from __future__ import annotations

DST = 0  # destination server
DST_R = 1  # destination router
CREATED = 2  # cycle the packet was generated
INJECTED = 3  # cycle its head entered the first router
HOPS = 4  # router-to-router hops taken so far
READY = 5  # cycle its head is in the current buffer
SRC = 6  # source router
MID = 7  # intermediate router (Valiant family), -1 if none
PHASE = 8  # routing phase
PATH = 9  # path id (source routing) or per-packet random word
CLASS_HOPS = 10  # hops on links of class >= 1 (Dragonfly: global) in the current phase
ENTERS_RING = 11  # 1 if the hop it is making enters a ring (bubble flow control), else 0
N_FIELDS = 12
# Records of finite workloads (`jaxnet.sim.workload`) have one more field: the step of the
# sender's program the packet belongs to; open-loop records stay N_FIELDS wide.
STEP = N_FIELDS
# Under router.output_queue: reserved, records have one more field, the last: the input ring
# the packet crossed the crossbar from (its credit returns when it leaves the output queue).
ORIGIN = -1

# Fields of a source-queue entry (and the step, in finite workloads).
Q_DST, Q_DST_R, Q_CREATED = 0, 1, 2
N_QUEUE_FIELDS = 3
Q_STEP = N_QUEUE_FIELDS
