"""The MCP wire layer: the only package that imports the MCP SDK.

``gateway.McpGateway`` (the ``core.ports.Gateway``) holds one ``connection.McpConnection`` per
server and credential profile; ``tasks_ext`` speaks the Tasks extension (SEP-2663) and
``translate`` turns SDK replies and failures into core outcomes.
"""
