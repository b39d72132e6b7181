"""The portfolio: the one place that decides which engine, which store and how much effort
(states, steps, Z3 units; never seconds) each claim gets, between the engines and the runner.

`decide.Portfolio` decides one reading's claims (and, with `--printed`, those its printed values
left open, again at the default values); `plan.run_claims` runs claims and their monitor
products through an engine; `auto.AutoEngine` is `--engine auto`'s choice per claim (explicit
search, random runs, Z3); `stores.choose_store` the one store policy, also the analyses'."""
