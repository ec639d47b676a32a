"""Path sets, path weights and routing tables computed on the host."""
