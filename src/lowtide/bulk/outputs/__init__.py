"""What a bulk run hands back and writes: its results in input order, its summary, and the files it writes whole."""
