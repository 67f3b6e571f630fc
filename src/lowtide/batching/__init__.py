"""Provider-neutral batch machinery: the durable engine, stored outcomes and crash points for tests."""
