"""Peloton table companion: pure game logic and the table session (no camera, GPIO or HTTP)."""
