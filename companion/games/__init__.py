"""Rules engines, one module or package per game."""
