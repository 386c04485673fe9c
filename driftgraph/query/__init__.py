"""Query modes (local, drift, global, basic) and what they share: deps, budget, trace, result envelope."""
