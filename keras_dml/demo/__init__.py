"""`keras-dml demo`: every method trained briefly on the bundled digits, compared and exported."""
