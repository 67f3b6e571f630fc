"""Small primitives every layer uses, below the public types and errors: the clock, JSON, modes, names."""
