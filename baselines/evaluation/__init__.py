"""Playing agents against each other and scoring them: games and round robins with Wilson and
mean intervals (:mod:`.tournament`), the ``evaluate`` CLI (:mod:`.evaluate`), the solitaire
variant's exact solver CLI and its evaluation against the solver (:mod:`.solitaire_solver`,
:mod:`.solitaire_eval`).  Imports agents and the CLI helpers, never training or play."""
