"""Options: every key users may pass, resolved once into frozen typed configs."""
