"""The shared policy-file reader. It lives in the ROS package (``deploy_ros/sim2real_deploy/policy_file.py``) so
the robot needs nothing from the training side; ``pyproject.toml`` installs it with ``sim2real``."""

from sim2real_deploy.policy_file import (  # noqa: F401
    INPUT_NAME,
    METADATA_KEY,
    OUTPUT_NAME,
    SCHEMA_VERSION,
    VERSION_KEY,
    OnnxPolicy,
    PolicyFileError,
    PolicyMetadata,
    read_metadata,
    validate_metadata,
)
