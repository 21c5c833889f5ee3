"""Um Reifenbreite (Homas Tour 1979, Jumbo 1991): the rules engine.

``Race`` holds a race and applies events (``events.py``) with a verdict for
each; ``movement.py`` finds where riders may go; ``cards.py`` the energy and
chance cards. Rules levels: basic, advanced (road surfaces), professional
(sprints, yellow jersey, chase car, switching the lead).
"""

from companion.games.reifenbreite.cards import ChanceCard, ChanceKind, EnergyCard
from companion.games.reifenbreite.events import (
    Chance,
    Decline,
    Draft,
    Event,
    EventFormatError,
    Move,
    Photos,
    Place,
    PlacementRoll,
    Roll,
    Setup,
    SwitchLead,
    event_from_dict,
    event_to_dict,
)
from companion.games.reifenbreite.race import (
    IllegalEventError,
    Level,
    Phase,
    Prompt,
    Race,
    Settings,
    Verdict,
)
from companion.games.reifenbreite.setup import SetupError, race_from_setup

__all__ = [
    "Chance", "ChanceCard", "ChanceKind", "Decline", "Draft", "EnergyCard", "Event",
    "EventFormatError", "IllegalEventError", "Level", "Move", "Phase", "Photos", "Place",
    "PlacementRoll", "Prompt", "Race", "Roll", "Settings", "Setup", "SetupError", "SwitchLead",
    "Verdict", "event_from_dict", "event_to_dict", "race_from_setup",
]
