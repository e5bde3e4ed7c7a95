"""sim2real: from a robot description to a policy on the real machine.

Tasks on Isaac Lab (``sim2real.tasks``), rsl-rl PPO configs (``sim2real.agents``), self-describing ONNX
export and native-MuJoCo sim-to-sim checks (``sim2real.export``), and a ROS 2 package (``deploy_ros/``).
Importing this package is cheap: Isaac Lab and torch load only where they are used.
"""

from pathlib import Path

__version__ = "0.1.0"

REPO_ROOT = Path(__file__).resolve().parent.parent
ASSETS_DIR = REPO_ROOT / "assets"
