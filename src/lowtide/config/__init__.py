"""An actor's configuration: the YAML or JSON it is read from, its settings and its endpoints."""
