"""The shared policy-file reader (``deploy_ros/sim2real_deploy/policy_file.py``), importable from here.

The reader lives in the ROS package so the robot needs nothing from the training side. When that package
is not installed (a plain checkout or an editable install of ``sim2real`` alone), import it from the repo.
"""

from __future__ import annotations

import sys

try:
    from sim2real_deploy import policy_file
except ImportError:
    from sim2real import REPO_ROOT

    sys.path.append(str(REPO_ROOT / "deploy_ros"))
    from sim2real_deploy import policy_file

METADATA_KEY = policy_file.METADATA_KEY
VERSION_KEY = policy_file.VERSION_KEY
SCHEMA_VERSION = policy_file.SCHEMA_VERSION
INPUT_NAME = policy_file.INPUT_NAME
OUTPUT_NAME = policy_file.OUTPUT_NAME
OnnxPolicy = policy_file.OnnxPolicy
PolicyFileError = policy_file.PolicyFileError
PolicyMetadata = policy_file.PolicyMetadata
read_metadata = policy_file.read_metadata
validate_metadata = policy_file.validate_metadata
