"""The Flask web page of the table companion."""
