"""The shared MDP vocabulary: Isaac Lab's terms plus the few sim2real adds. Tasks vary configs, not terms."""

from isaaclab.envs.mdp import *  # noqa: F403
from isaaclab_tasks.core.velocity.mdp import (  # noqa: F401
    feet_air_time,
    feet_air_time_positive_biped,
    feet_slide,
    terrain_out_of_bounds,
)

from .actions import (  # noqa: F401
    DelayedJointPositionAction,
    DelayedJointPositionActionCfg,
    HeldJointPositionAction,
    HeldJointPositionActionCfg,
)
from .commands import AxisVelocityCommand, AxisVelocityCommandCfg  # noqa: F401
from .curriculums import (  # noqa: F401
    command_ranges_vel,
    modify_reward_weights,
    ramp_reward_weights,
    terrain_levels_tracked,
    terrain_top_rows,
)
from .events import randomize_joint_passive_dynamics  # noqa: F401
from .feet import feet_clearance_body, feet_spin, feet_stumble, feet_tilt  # noqa: F401
from .gait import feet_phase, feet_swing_height, gait_contact, gait_phase, stand_still  # noqa: F401
from .height_grid import (  # noqa: F401
    HeightGrid,
    base_height_above_ground_l2,
    ground_height,
    height_above_ground,
    height_scan_grid,
    scanner_params,
    terrain_grid,
)
from .momentum import angular_momentum_l2  # noqa: F401
from .observations import (  # noqa: F401
    action_delay,
    actuator_gain_scale,
    base_height,
    body_com,
    body_mass,
    contact_states,
    joint_passive_dynamics,
    shape_friction,
)
from .posture import joint_deviation_l1_unless_sidestepping  # noqa: F401
from .tracking import ang_vel_z_error_l2  # noqa: F401
