"""Fire & Ice: rules core (``rules``), AEC env (``env``), renderers (``render``)."""
