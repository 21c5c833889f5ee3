"""Camera sources, GPIO and the table loop (hardware libraries imported lazily)."""
