"""Shared vocabulary at the bottom of the package: every layer may import it, it imports
no other part of jaxnet. Packet record layout (`packets`), counter-based random numbers
(`rng`), parameter validation (`validate`), atomic file writing (`files`), the
config-name registries (`registry`) and where the config files live (`configs`)."""
