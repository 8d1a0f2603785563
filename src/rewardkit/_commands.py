"""The subcommands of ``rewardkit``, loaded lazily: name → "module:attribute" of a click command
or group. Each area registers its own line here."""

from __future__ import annotations

COMMANDS: dict[str, str] = {
    "demo": "rewardkit.cli:demo",
    "sandbox": "rewardkit.sandbox.cli:sandbox",
    "selfplay": "rewardkit.selfplay.cli:selfplay",
}
