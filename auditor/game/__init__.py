"""The game: each table replayed in seq order into the state beside its
events, and the outcomes of a roll."""
