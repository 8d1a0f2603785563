"""The subcommands of ``rewardkit``, loaded lazily: name → "module:attribute" of a click command
or group. Each area registers its own line here."""

from __future__ import annotations

COMMANDS: dict[str, str] = {
    "demo": "rewardkit.cli:demo",
    "bioaudit": "rewardkit.bioaudit.cli:bioaudit",
    "autorater": "rewardkit.autorater.cli:autorater",
    "calibrate": "rewardkit.audit.cli:calibrate_cmd",
    "validate": "rewardkit.audit.cli:validate_cmd",
    "lab": "rewardkit.envs.cli:lab",
    "redteam": "rewardkit.envs.cli:redteam",
    "sweep": "rewardkit.envs.cli:sweep",
    "sandbox": "rewardkit.sandbox.cli:sandbox",
    "selfplay": "rewardkit.selfplay.cli:selfplay",
    "learn": "rewardkit.learn.cli:learn",
}
