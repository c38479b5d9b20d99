"""The notebook surface: kernel runtime, magics, task widgets and displays. Only this layer imports IPython."""
