"""A property-based fuzz of every function our libraries export.

Exports are found in the built libraries (``nm -D``), their signatures by
asking each export (a call with the wrong number of arguments raises a
TypeError that spells the signature out). First a systematic pass puts every
bad value of every kind into every parameter with the others valid
(:func:`.run.systematic`); then hypothesis draws argument lists from
:mod:`.cases`. A pool of long-lived child processes (:mod:`.pool`) runs
each call, so an abort, a signal or a hang is seen and never hides the
other cases. A case passes when the call returns (a correct result, where
:mod:`.references` has one) or raises a Python exception.
"""
