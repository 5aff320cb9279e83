"""The base model of D&C and hierarchical D&C, and hierarchical D&C's division state."""
