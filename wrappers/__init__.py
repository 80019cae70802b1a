"""Gymnasium wrappers (importable as ``privenv.wrappers``): local-DP perturbation of what the
learner sees, contamination, observation views for RL agents."""
