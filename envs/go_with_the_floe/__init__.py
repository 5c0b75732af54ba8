"""Go with the Floe: rules core (``rules``), AEC env with match play (``env``), renderers (``render``)."""
