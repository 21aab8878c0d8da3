#!/bin/sh
# Placeholder: the macros of the Multi30k run (figures/multi30k/); filled in from the run.
