"""Schedule passes, one module each, each switched by its Tuning field. With
every pass off (tuning.NOOPT) the driver emits plain loops."""
