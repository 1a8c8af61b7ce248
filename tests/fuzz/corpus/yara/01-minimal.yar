rule minimal { condition: true }
