/*
 * Sample source for `make demo` (samples/demo). Written for this project;
 * it imitates the shape of an emulator script, not any real file.
 */

#include "ScriptMgr.h"
#include "ScriptedCreature.h"
#include "Player.h"

enum WolpertingerGlade
{
    QUEST_CATCH_THE_WOLPERTINGER = 90001,
    NPC_WILD_WOLPERTINGER        = 90002,
    ITEM_WOLPERTINGER_NET        = 90003,
    SPELL_THROW_NET              = 90004,
    NPC_WOLPERTINGER_CAUGHT      = 90005
};

class npc_wild_wolpertinger : public CreatureScript
{
public:
    npc_wild_wolpertinger() : CreatureScript("npc_wild_wolpertinger") { }

    struct npc_wild_wolpertingerAI : public ScriptedAI
    {
        npc_wild_wolpertingerAI(Creature* creature) : ScriptedAI(creature) { }

        void SpellHit(Unit* caster, SpellInfo const* spell) override
        {
            if (spell->Id != SPELL_THROW_NET)
                return;

            Player* player = caster->ToPlayer();
            if (!player)
                return;

            // Credit once the quest is done.
            if (player->GetQuestStatus(QUEST_CATCH_THE_WOLPERTINGER) == QUEST_STATUS_COMPLETE)
                player->KilledMonsterCredit(NPC_WOLPERTINGER_CAUGHT);

            me->DespawnOrUnsummon(2000);
        }
    };

    CreatureAI* GetAI(Creature* creature) const override
    {
        return new npc_wild_wolpertingerAI(creature);
    }
};

void AddSC_zone_wolpertinger_glade()
{
    new npc_wild_wolpertinger();
}
