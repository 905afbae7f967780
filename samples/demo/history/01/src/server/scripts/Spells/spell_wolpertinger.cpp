// Throw Net (spell 90004): the net a player throws at a wild wolpertinger.
// Sample source for `make demo` (samples/demo), written for this project.
#include "ScriptMgr.h"

class spell_wolpertinger_throw_net : public SpellScript
{
    void HandleHit(SpellEffIndex /*effIndex*/) { }
};

void AddSC_wolpertinger_spells()
{
    RegisterSpellScript(spell_wolpertinger_throw_net);
}
