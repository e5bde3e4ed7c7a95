"""Build Isaac Lab articulation configs from robot specs (the only place that does)."""

from __future__ import annotations

import re

import isaaclab.sim as sim_utils
from isaaclab.actuators import DCMotorCfg, IdealPDActuatorCfg
from isaaclab.assets import ArticulationCfg
from isaaclab_newton.sim.schemas import NewtonArticulationCfg

from sim2real.robots.spec import JointGroup, RobotSpec


def articulation_cfg(spec: RobotSpec, prim_path: str = "{ENV_REGEX_NS}/Robot") -> ArticulationCfg:
    """Articulation loaded from the robot's local USD, one explicit actuator per joint group (``spec.actuator_model``,
    DC motor by default).

    DC motor rather than ideal PD or the solver's implicit PD: the Go2's motors lose torque with speed
    (the torque-speed line from peak effort at standstill to zero at the no-load speed), and a policy trained
    without that saturation asks for fast swings the real motors cannot deliver. Explicit PD also makes the
    gains readable per env, which the critic's privileged observations and gain randomisation need.
    """
    actuators = {f"group{i}": actuator_cfg(spec, group) for i, group in enumerate(spec.joint_groups)}
    return ArticulationCfg(
        prim_path=prim_path,
        spawn=sim_utils.UsdFileCfg(
            usd_path=str(spec.usd_path),
            activate_contact_sensors=True,
            articulation_props=NewtonArticulationCfg(self_collision_enabled=False),
        ),
        init_state=ArticulationCfg.InitialStateCfg(
            pos=(0.0, 0.0, spec.init_base_height),
            joint_pos=dict(spec.default_joint_pos),
            joint_vel={".*": 0.0},
        ),
        soft_joint_pos_limit_factor=0.9,
        actuators=actuators,
    )


def actuator_cfg(spec: RobotSpec, group: JointGroup) -> DCMotorCfg | IdealPDActuatorCfg:
    """Isaac Lab's actuator for ``spec.actuator_model``; the robot side's twin is ``sim2real_deploy.actuators``. A group
    with ``implicit_damping`` puts its Kd into the joints' own damping (the MJCF's, which the robot side adds it to)."""
    model = spec.actuator_model
    implicit = None
    if group.implicit_damping:
        if any(re.fullmatch(group.pattern, j) for j in spec.gripper_joints):  # not in the metadata's joint list
            raise ValueError(f"{spec.name}: implicit_damping on {group.pattern!r} would reach gripper joints")
        joints = [j for j in spec.joint_names if re.fullmatch(group.pattern, j)]
        implicit = {j: spec.mjcf_joint_damping[j] + group.damping for j in joints}
    common = dict(
        joint_names_expr=[group.pattern],
        stiffness=group.stiffness,
        damping=0.0 if group.implicit_damping else group.damping,
        viscous_friction=implicit,  # None: the USD's joint damping (the MJCF's)
        actuator_effort_limit=group.effort_limit,
        actuator_velocity_limit=group.velocity_limit,
        friction=0.0,
    )
    if model == "dc_motor":
        return DCMotorCfg(**common, saturation_effort=group.effort_limit)
    if model == "pd":
        return IdealPDActuatorCfg(**common)
    raise ValueError(f"actuator model {model!r} unknown (known: dc_motor, pd)")


def mjcf_friction_model(spec: RobotSpec) -> dict[str, float | str]:
    """The MJCF's friction cone and impratio: training simulates contacts as the robot's model (and so the sim-to-sim
    check and the ROS bridge) does. The Go2's elliptic cone against the pyramidal one changes lateral and yaw
    tracking by a third (``benchmarks/cone_cost.py``, ``docs/cone.md``)."""
    import mujoco

    opt = mujoco.MjModel.from_xml_path(str(spec.mjcf_path)).opt
    cone = "elliptic" if opt.cone == mujoco.mjtCone.mjCONE_ELLIPTIC else "pyramidal"
    return {"cone": cone, "impratio": float(opt.impratio)}
