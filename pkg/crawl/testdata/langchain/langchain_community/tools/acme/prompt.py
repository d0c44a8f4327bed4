ACME_LIST_PROMPT = """
    This tool lists Acme widgets.
    It takes no input.
    """

ACME_CREATE_PROMPT = "This tool creates an Acme widget. " "Input is the widget name."
