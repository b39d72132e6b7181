from verifier.cli import main
from verifier.resources.signals import leave, process_started

leave(main(started=process_started()))
