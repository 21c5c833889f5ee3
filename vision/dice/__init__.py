"""The dice reader: values of the top faces of six-sided pip dice in a camera frame.

``read_dice(frame, roi=None)`` returns one :class:`DieReading` per die seen,
with ``value`` 1..6 or ``None`` when the die was seen but cannot be read
safely ("unclear, roll again"). See docs/dice.md.
"""

from vision.dice.reader import DiceReader, DieReading, default_reader, read_dice

__all__ = ["DiceReader", "DieReading", "default_reader", "read_dice"]
