"""sim2real_deploy: serve sim2real's exported ONNX policies on a robot through ROS 2.

Robot-side code: numpy, onnxruntime and ROS 2 only (never Isaac Lab or torch).
"""
