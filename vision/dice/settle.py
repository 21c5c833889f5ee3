"""Settle a roll over camera frames: take the dice only once they lie still.

A single frame of a die still rolling can be smeared enough to be misread (a
"5" smeared into rows of three looks like a "6"; docs/dice.md, "Blurred
dice"). A rolling die also moves and turns between frames, so a reading that
repeats, every die at the same place with the same value, in ``frames``
consecutive frames is one of dice at rest. :class:`RollSettler` is fed the
reader's output frame by frame and gives a :class:`Roll` the first time that
happens (where a die stays unclear, a few frames later, with that die
unclear), then nothing until the dice move again. Pure code: no camera, no
clock; the caller decides how often to look and when to give up (``settle``
does both for a finite run of frames).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from vision.dice.reader import DieReading

#: How far a die's centre may move between frames and still be the same die at
#: rest, as a share of its size. The reader places a still die within 0.3 px
#: (99 % of val dice under sensor noise), now and then 0.1 of its size (it
#: centres another peak); a die moving fast enough to be misread is smeared by
#: 0.2 of its size or more, and moves at least that far from frame to frame.
STILL_SHARE = 0.15
#: The same, in pixels, for small dice and readings without a size.
STILL_MIN_PX = 2.0


@dataclass(frozen=True)
class Roll:
    """Dice that lay still for ``frames`` frames in a row.

    ``dice`` are the readings of the last of those frames, in the reader's
    order; a die whose value was not the same over the frames the settler
    asks for is given as unclear (``value`` None). ``expected`` is the number
    of dice the game rolls (None: any).
    """

    dice: tuple[DieReading, ...]
    frames: int
    expected: int | None = None

    @property
    def values(self) -> tuple[int | None, ...]:
        """The dice's values in reading order; None for a die that cannot be read."""
        return tuple(d.value for d in self.dice)

    @property
    def problem(self) -> str | None:
        """Why this roll cannot be taken as it is ("roll again"), or None when it can."""
        if self.expected is not None and len(self.dice) != self.expected:
            want = f"{self.expected} {'die' if self.expected == 1 else 'dice'}"
            n = len(self.dice)
            why = ("dice touching may be seen as one or none, or one lies outside the dice area"
                   if n < self.expected else "another die or something like one is in sight")
            return f"expected {want}, {n} seen ({why}): roll again"
        unclear = sum(1 for d in self.dice if d.value is None)
        if unclear:
            which = "a die" if unclear == 1 else f"{unclear} dice"
            return f"{which} cannot be read (cocked, hidden or unclear): roll again"
        if not self.dice:
            return "no dice on the table"
        return None

    @property
    def ok(self) -> bool:
        """True when every expected die lies still and was read."""
        return self.problem is None


def pair_dice(a: Sequence[DieReading], b: Sequence[DieReading], *,
              still_share: float = STILL_SHARE,
              still_min_px: float = STILL_MIN_PX) -> list[int] | None:
    """For each die of ``b`` the index of the die of ``a`` lying at the same place, or None
    when the two frames do not show as many dice at the same places (values aside).

    Dice are paired nearest first; a pair is "at the same place" when the centres
    are within ``still_share`` of the die's size (or ``still_min_px``).
    """
    if len(a) != len(b):
        return None
    pairs = sorted(
        ((_dist(da, db), i, j) for i, da in enumerate(a) for j, db in enumerate(b)),
        key=lambda t: t[0])
    of_b: dict[int, int] = {}
    used_a: set[int] = set()
    for dist, i, j in pairs:
        if i in used_a or j in of_b:
            continue
        if dist > max(still_min_px, still_share * max(a[i].size, b[j].size)):
            return None
        used_a.add(i)
        of_b[j] = i
    return [of_b[j] for j in range(len(b))]


def same_dice(a: Sequence[DieReading], b: Sequence[DieReading], *,
              still_share: float = STILL_SHARE, still_min_px: float = STILL_MIN_PX) -> bool:
    """True when two frames show the same dice: as many, each at the same place
    (:func:`pair_dice`) with the same value (None matches None: a cocked die that stays
    cocked)."""
    pairing = pair_dice(a, b, still_share=still_share, still_min_px=still_min_px)
    return pairing is not None and all(a[i].value == d.value for i, d in zip(pairing, b, strict=True))


def _dist(a: DieReading, b: DieReading) -> float:
    return float(((a.center[0] - b.center[0]) ** 2 + (a.center[1] - b.center[1]) ** 2) ** 0.5)


class RollSettler:
    """Fed the reader's output frame by frame; says when the dice have come to rest.

    ``feed`` returns a :class:`Roll` on the frame where the last ``frames``
    frames have shown the same dice (:func:`same_dice`), every one read, and
    None otherwise. Where a die lying still is unclear, or its reading keeps
    changing (a doubtful die read "5" in one frame and unclear in the next), or
    where not the ``expected`` number of dice lie still (one still rolling in,
    or missed in these frames), the settler waits ``patience`` more frames (a
    die may be sliding slowly enough to look still); then the roll is given as
    it is, that die unclear (``value`` None) or the count short, and
    :attr:`Roll.problem` says "roll again": a still table always gets an answer. A roll
    is given once: the next one needs the dice to move or change first (picked
    up, thrown again). ``reset`` forgets what was seen (a new turn).
    """

    def __init__(self, frames: int = 2, *, expected: int | None = None, patience: int = 4,
                 still_share: float = STILL_SHARE, still_min_px: float = STILL_MIN_PX) -> None:
        if frames < 1:
            raise ValueError(f"frames must be at least 1, not {frames}")
        if patience < 0:
            raise ValueError(f"patience must be 0 frames or more, not {patience}")
        if expected is not None and expected < 1:
            raise ValueError(f"expected must be at least 1 die, not {expected}")
        self.frames = frames
        self.expected = expected
        self.patience = patience
        self.still_share = still_share
        self.still_min_px = still_min_px
        self.reset()

    def reset(self) -> None:
        """Forget the frames seen so far and any roll already given."""
        self._last: tuple[DieReading, ...] = ()
        self._values: list[list[int | None]] = []   # per die of the last frame, oldest first
        self._still = 0                              # frames the dice have lain where they are
        self._given = False

    def feed(self, readings: Iterable[DieReading]) -> Roll | None:
        """Take one frame's readings; a :class:`Roll` when the dice have just settled."""
        dice = tuple(readings)
        pairing = pair_dice(self._last, dice, still_share=self.still_share,
                            still_min_px=self.still_min_px) if self._still else None
        if pairing is None:
            self._values = [[d.value] for d in dice]
            self._still = 1
            self._given = False
        else:
            self._values = [[*self._values[i], d.value] for i, d in zip(pairing, dice, strict=True)]
            self._still += 1
        self._last = dice
        if self._given or not dice or self._still < self.frames:
            return None
        agreed = [len(set(v[-self.frames:])) == 1 for v in self._values]
        readable = all(agreed) and all(d.value is not None for d in dice)
        counted = self.expected is None or len(dice) == self.expected
        if not (readable and counted) and self._still < self.frames + self.patience:
            return None            # a die may yet be read, or roll in: one still sliding
        self._given = True
        shown = tuple(d if ok else DieReading(None, d.center, d.confidence, d.size)
                      for d, ok in zip(dice, agreed, strict=True))
        return Roll(dice=shown, frames=self._still, expected=self.expected)


def settle(readings: Iterable[Sequence[DieReading]], frames: int = 2, *,
           expected: int | None = None, patience: int = 4) -> tuple[Roll | None, int]:
    """The first settled roll in a run of frames' readings (one list per frame), and how
    many frames it took: :class:`RollSettler` over a finite run.

    Stops at the first roll (the rest of ``readings`` is not consumed); ``(None, n)``
    when none of the ``n`` frames settled a roll.
    """
    settler = RollSettler(frames, expected=expected, patience=patience)
    seen = 0
    for dice in readings:
        seen += 1
        roll = settler.feed(dice)
        if roll is not None:
            return roll, seen
    return None, seen
