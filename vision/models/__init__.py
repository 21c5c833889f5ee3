"""Trained model files (ONNX) of the vision package; see docs/dice.md for how they are made."""
