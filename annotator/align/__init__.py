"""`annotator align`: a better judge prompt, proposed from the dev split by an optimizer model
and kept only when the test split says it is better (``loop``); the optimizer's requests and
the candidates its replies make (``optimizer``)."""
