"""The migration scripts, oldest first."""
