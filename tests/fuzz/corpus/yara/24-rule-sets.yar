rule set_one { condition: filesize > 0 }
rule set_two { condition: filesize > 1 }
rule other_rule { condition: true }

rule of_rules
{
    condition:
        any of (set_*) and 1 of (set_one, other_rule) and all of (set*) and 50% of (set_one, set_two)
}
