"""Design -> Design rewrites (API.md "Passes (v1)"; docs/passes.md)."""
