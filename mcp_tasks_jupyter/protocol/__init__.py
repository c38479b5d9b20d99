"""Wire models and codecs: JSON-RPC envelopes, MCP types, task dialect codecs. No I/O here."""
