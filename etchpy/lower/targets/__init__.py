"""Output targets, one module per kind (see lower.target for the protocol)."""
