"""OpenCV: dice, board localisation, rider tokens, synthetic table, printables."""
