"""conch shell: a hybrid shell where shell lines run and plain language goes to the model.

``conch.shell.route`` decides where one input line goes.
"""
