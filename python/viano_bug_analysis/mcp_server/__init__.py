"""``vba mcp``: the read-only investigation tools as an MCP server over stdio.

``tools.McpTools`` holds the tools (no MCP SDK in it), ``audit`` the
append-only call records in the package, ``server`` the wiring to the
official MCP Python SDK and ``command`` the command line entry. See
docs/mcp.md.
"""
