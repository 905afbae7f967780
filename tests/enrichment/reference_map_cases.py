"""Which fixture row exercises each entry of the bundled Vcore reference map.

``CASES`` names, for every ``[[references]]`` entry that holds an ID, the
entities (type, ID) the rows of tests/fixtures/world_db.sql name through it
(its "reference map" section: IDs 93000-93999, GUIDs 600000+). An entry whose
sign picks another type (a spawn GUID, a gameobject in RequiredNpcOrGo) has a
case for each type. ``SYMBOLS`` names a script name each symbol entry's table
holds. tests/enrichment/test_reference_map_vcore.py fails for an entry with
no case here, so a new entry needs a fixture row and a line here.
"""

from __future__ import annotations

Case = tuple[str, int]

CREATURE = 93001  # Refmap Harness Drake: owns most rows
TARGET = 93002  # Refmap Target Hound: what they name
CREDIT = 93003  # Refmap Credit Wisp
PASSENGER = 93004
LEVER = 93101  # Refmap Lever (SmartGameObjectAI)
CHEST = 93102
QUEST, NEXT, BREADCRUMB = 93201, 93202, 93203
SPELL, SPELL_2 = 93301, 93302
ITEM = 93401
AREA = 93501
TRIGGER = 93601
MENU, MENU_2 = 93701, 93702
PHASE = 93801
PATH = 93901
SMART_PATH, SMART_PATH_2 = 93951, 93952
WAYPOINT_SCRIPT = 93971
SCRIPT_EVENT = 93981
GRAVEYARD = 93991
REFERENCE = 93995
GROUP, LONE_GROUP = 93999, -93998
ACTION_LIST = 9300100
EVENT, EVE = 93, 94
SPAWN, TARGET_SPAWN = 600001, 600002
LEVER_SPAWN, CHEST_SPAWN = 600101, 600102

CASES: dict[str, list[Case]] = {
    # quest starters and enders
    "quest_creature_starter_link": [("quest", QUEST)],
    "quest_creature_starter": [("creature", CREATURE)],
    "quest_creature_ender_link": [("quest", NEXT)],
    "quest_creature_ender": [("creature", CREATURE)],
    "quest_gameobject_starter_link": [("quest", QUEST)],
    "quest_gameobject_starter": [("gameobject", LEVER)],
    "quest_gameobject_ender_link": [("quest", NEXT)],
    "quest_gameobject_ender": [("gameobject", LEVER)],
    "quest_areatrigger_objective_link": [("quest", QUEST)],
    "areatrigger_quest_objective": [("areatrigger", TRIGGER)],
    # quest_template_addon
    "quest_addon": [("quest", QUEST)],
    "quest_previous": [("quest", QUEST)],  # -93201 (taken) and 93201 (rewarded)
    "quest_next": [("quest", NEXT)],
    "quest_breadcrumb_for": [("quest", NEXT)],
    "quest_exclusive_group": [
        ("quest_exclusive_group", GROUP),
        ("quest_exclusive_group", LONE_GROUP),
    ],
    "quest_source_spell": [("spell", SPELL)],
    # quest_template
    "quest_start_item": [("item", ITEM)],
    "quest_required_item_1": [("item", 93401)],
    "quest_required_item_2": [("item", 93402)],
    "quest_required_item_3": [("item", 93403)],
    "quest_required_item_4": [("item", 93404)],
    "quest_required_item_5": [("item", 93405)],
    "quest_required_item_6": [("item", 93406)],
    "quest_required_creature_1": [("creature", TARGET)],
    "quest_required_creature_2": [("gameobject", CHEST)],
    "quest_required_creature_3": [("creature", CREDIT)],
    "quest_required_creature_4": [("creature", PASSENGER)],
    "quest_reward_next_quest": [("quest", NEXT)],
    "disable_spell": [("spell", SPELL_2)],
    "disable_quest": [("quest", BREADCRUMB)],
    # conditions: sources
    "condition_loot_item": [("item", ITEM)],
    "condition_spell_source": [("spell", SPELL)],
    "condition_spell_area_spell": [("spell", SPELL)],
    "condition_quest_available": [("quest", QUEST)],
    "condition_creature_vehicle": [("creature", CREATURE)],
    "condition_creature_group": [("creature", CREATURE)],
    "condition_vendor_item": [("item", ITEM)],
    "condition_smart_event_creature": [("creature", CREATURE), ("creature_spawn", SPAWN)],
    "condition_smart_event_gameobject": [("gameobject", LEVER), ("gameobject_spawn", LEVER_SPAWN)],
    "condition_smart_event_areatrigger": [("areatrigger", TRIGGER)],
    "condition_smart_event_quest": [("quest", QUEST)],
    "condition_smart_event_action_list": [("smart_action_list", ACTION_LIST)],
    "condition_gossip_menu": [("gossip_menu", MENU)],
    "condition_phase": [("phase", PHASE)],
    "condition_area_source": [("area", AREA)],
    "condition_graveyard": [("graveyard", GRAVEYARD)],
    "condition_spawn_creature": [("creature", CREATURE)],
    "condition_spawn_gameobject": [("gameobject", LEVER)],
    "condition_reference_template": [("condition_reference", REFERENCE)],
    "condition_calls_reference": [("condition_reference", REFERENCE)],
    # conditions: value slots
    "condition_aura_or_spell": [("spell", SPELL_2)],
    "condition_item": [("item", 93402)],
    "condition_area_target": [("area", AREA)],
    "condition_quest_state": [("quest", NEXT)],
    "condition_active_event": [("game_event", EVENT)],
    "condition_phase_target": [("phase", PHASE)],
    "condition_near_creature": [("creature", TARGET)],
    "condition_near_gameobject": [("gameobject", CHEST)],
    "condition_object_entry_creature": [("creature", TARGET)],
    "condition_object_entry_gameobject": [("gameobject", CHEST)],
    "condition_object_guid_creature": [("creature_spawn", TARGET_SPAWN)],
    "condition_object_guid_gameobject": [("gameobject_spawn", CHEST_SPAWN)],
    # SmartAI owners
    "creature_smart_scripts": [("creature", CREATURE), ("creature_spawn", SPAWN)],
    "gameobject_smart_scripts": [("gameobject", LEVER), ("gameobject_spawn", LEVER_SPAWN)],
    "areatrigger_smart_scripts": [("areatrigger", TRIGGER)],
    "quest_smart_scripts": [("quest", QUEST)],
    "smart_action_list_rows": [("smart_action_list", ACTION_LIST)],
    # SmartAI events
    "smart_event_spell": [("spell", SPELL)],
    "smart_event_victim_casting": [("spell", SPELL)],
    "smart_event_creature": [("creature", TARGET)],
    "smart_event_kill_creature": [("creature", TARGET)],
    "smart_event_text_over_creature": [("creature", CREATURE)],
    "smart_event_quest": [("quest", QUEST), ("quest", NEXT)],
    "smart_event_areatrigger": [("areatrigger", TRIGGER)],
    "smart_event_gossip_menu": [("gossip_menu", MENU)],
    "smart_event_game_event": [("game_event", EVENT)],
    "smart_event_script_event": [("script_event", SCRIPT_EVENT)],
    "smart_event_waypoint_path": [("smart_waypoint_path", SMART_PATH)],
    "smart_event_distance_creature_guid": [("creature_spawn", TARGET_SPAWN)],
    "smart_event_distance_creature_entry": [("creature", TARGET)],
    "smart_event_distance_gameobject_guid": [("gameobject_spawn", CHEST_SPAWN)],
    "smart_event_distance_gameobject_entry": [("gameobject", CHEST)],
    # SmartAI actions
    "smart_action_spell": [("spell", SPELL_2), ("spell", SPELL)],
    "smart_action_learn_spell_1": [("spell", SPELL)],
    "smart_action_learn_spell_2": [("spell", SPELL_2)],
    "smart_action_creature": [("creature", TARGET), ("creature", CREDIT)],
    "smart_action_follow_end_creature": [("creature", CREDIT)],
    "smart_action_gameobject": [("gameobject", CHEST)],
    "smart_action_quest": [("quest", QUEST), ("quest", BREADCRUMB)],
    "smart_action_complete_quest_1": [("quest", QUEST)],
    "smart_action_complete_quest_2": [("quest", NEXT)],
    "smart_action_waypoint_quest": [("quest", QUEST)],
    "smart_action_waypoint_stop_quest": [("quest", NEXT)],
    "smart_action_item": [("item", ITEM)],
    "smart_action_phase": [("phase", PHASE)],
    "smart_action_gossip_menu": [("gossip_menu", MENU_2)],
    "smart_action_game_event": [("game_event", EVE)],
    "smart_action_waypoint_path": [("smart_waypoint_path", SMART_PATH)],
    "smart_action_respawn_creature": [("creature_spawn", TARGET_SPAWN)],
    "smart_action_respawn_gameobject": [("gameobject_spawn", CHEST_SPAWN)],
    "smart_call_action_list": [("smart_action_list", ACTION_LIST)],
    "smart_call_action_list_2": [("smart_action_list", 9300101), ("smart_action_list", 9300105)],
    "smart_call_action_list_3": [("smart_action_list", 9300102)],
    "smart_call_action_list_4": [("smart_action_list", 9300103)],
    "smart_call_action_list_5": [("smart_action_list", 9300104)],
    "smart_call_action_list_6": [("smart_action_list", 9300105)],
    "smart_closest_waypoint_1": [("smart_waypoint_path", SMART_PATH)],
    "smart_closest_waypoint_2": [("smart_waypoint_path", SMART_PATH_2)],
    # SmartAI targets
    "smart_target_creature_entry": [("creature", TARGET)],
    "smart_target_gameobject_entry": [("gameobject", CHEST)],
    "smart_target_creature_guid": [("creature_spawn", TARGET_SPAWN)],
    "smart_target_creature_guid_entry": [("creature", TARGET)],
    "smart_target_gameobject_guid": [("gameobject_spawn", CHEST_SPAWN)],
    "smart_target_gameobject_guid_entry": [("gameobject", CHEST)],
    # spells
    "spell_script_names_link": [("spell", SPELL), ("spell", SPELL_2)],  # -93302: all ranks
    "spell_linked_trigger": [("spell", SPELL)],  # 93301 and -93301
    "spell_linked_effect": [("spell", SPELL_2)],  # -93302 and 93302
    "spell_area_spell": [("spell", SPELL)],
    "spell_area_area": [("area", AREA)],
    "spell_area_quest_start": [("quest", QUEST)],
    "spell_area_quest_end": [("quest", NEXT)],
    "spell_area_aura_spell": [("spell", SPELL_2)],
    "spell_scripts_spell": [("spell", SPELL)],
    # legacy script commands
    "spell_script_command_quest": [("quest", QUEST)],
    "spell_script_command_creature": [("creature", TARGET)],
    "spell_script_command_gameobject_guid": [("gameobject_spawn", CHEST_SPAWN)],
    "spell_script_command_spell": [("spell", SPELL_2)],
    "spell_script_command_item": [("item", ITEM)],
    "event_scripts_event": [("script_event", SCRIPT_EVENT)],
    "event_script_command_quest": [("quest", QUEST)],
    "event_script_command_creature": [("creature", TARGET)],
    "event_script_command_gameobject_guid": [("gameobject_spawn", CHEST_SPAWN)],
    "event_script_command_spell": [("spell", SPELL_2)],
    "event_script_command_item": [("item", 93402)],
    "waypoint_scripts_script": [("waypoint_script", WAYPOINT_SCRIPT)],
    "waypoint_script_command_quest": [("quest", QUEST)],
    "waypoint_script_command_creature": [("creature", CREDIT)],
    "waypoint_script_command_gameobject_guid": [("gameobject_spawn", CHEST_SPAWN)],
    "waypoint_script_command_spell": [("spell", SPELL)],
    "waypoint_script_command_path": [("waypoint_path", PATH)],
    # waypoints
    "waypoint_path_points": [("waypoint_path", PATH)],
    "waypoint_point_script": [("waypoint_script", WAYPOINT_SCRIPT)],
    "smart_waypoint_points": [("smart_waypoint_path", SMART_PATH)],
    # creatures
    "creature_addon": [("creature", CREATURE)],
    "creature_addon_aura": [("spell", SPELL), ("spell", SPELL_2)],
    "creature_addon_path": [("waypoint_path", PATH)],
    "creature_spawn_addon": [("creature_spawn", SPAWN)],
    "creature_spawn_addon_aura": [("spell", SPELL_2)],
    "creature_spawn_addon_path": [("waypoint_path", PATH)],
    "creature_text_link": [("creature", CREATURE)],
    "creature_movement": [("creature", CREATURE)],
    "creature_spellclick": [("creature", CREATURE)],
    "creature_spellclick_spell": [("spell", SPELL)],
    "vehicle_accessory_vehicle": [("creature", CREATURE)],
    "vehicle_accessory_passenger": [("creature", PASSENGER)],
    "vehicle_spawn_accessory_vehicle": [("creature_spawn", SPAWN)],
    "vehicle_spawn_accessory_passenger": [("creature", PASSENGER)],
    "creature_vendor_items": [("creature", CREATURE)],
    "vendor_item": [("item", ITEM), ("creature", TARGET)],  # -93002: vendor 93002's list
    "creature_quest_item": [("creature", CREATURE)],
    "creature_quest_item_item": [("item", ITEM)],
    "gameobject_quest_item": [("gameobject", LEVER)],
    "gameobject_quest_item_item": [("item", 93402)],
    "creature_summon_group": [("creature", CREATURE)],
    "gameobject_summon_group": [("gameobject", LEVER)],
    "summon_group_creature": [("creature", TARGET), ("creature", CREDIT)],
    "creature_kill_credit_1": [("creature", TARGET)],
    "creature_kill_credit_2": [("creature", CREDIT)],
    "creature_gossip_menu": [("gossip_menu", MENU)],
    # gossip
    "gossip_menu_rows": [("gossip_menu", MENU), ("gossip_menu", MENU_2)],
    "gossip_menu_options": [("gossip_menu", MENU)],
    "gossip_option_actions": [("gossip_menu", MENU)],
    "gossip_option_action_menu": [("gossip_menu", MENU_2)],
    # items and area triggers
    "item_script_names_link": [("item", ITEM)],
    "item_addon": [("item", ITEM)],
    "areatrigger_script_names_link": [("areatrigger", TRIGGER)],
    # areas, phases, graveyards
    "area_phase": [("area", AREA)],
    "phase_areas": [("phase", PHASE)],
    "graveyard_zones": [("graveyard", GRAVEYARD)],
    "graveyard_zone_area": [("area", AREA)],
    # game events
    "event_spawn_creature": [("creature_spawn", SPAWN), ("creature_spawn", TARGET_SPAWN)],
    "event_spawn_creature_event": [("game_event", EVENT)],  # 93 and -93 (removed)
    "event_spawn_gameobject": [("gameobject_spawn", LEVER_SPAWN)],
    "event_spawn_gameobject_event": [("game_event", EVENT)],
    "quest_event_creature_link": [("quest", QUEST)],
    "quest_event_creature": [("creature", CREATURE)],
    "event_creature_quest_event": [("game_event", EVENT)],
    "quest_event_gameobject_link": [("quest", QUEST)],
    "quest_event_gameobject": [("gameobject", LEVER)],
    "event_gameobject_quest_event": [("game_event", EVENT)],
    "event_npcflag_spawn": [("creature_spawn", SPAWN)],
    "event_npcflag_event": [("game_event", EVENT)],
    "event_vendor_spawn": [("creature_spawn", SPAWN)],
    "event_vendor_item": [("item", 93403)],
    "event_vendor_event": [("game_event", EVENT)],
    "event_model_equip_spawn": [("creature_spawn", SPAWN)],
    "event_model_equip_event": [("game_event", EVENT)],
    "event_quest_condition_quest": [("quest", QUEST)],
    "event_quest_condition_event": [("game_event", EVENT)],
    "event_seasonal_quest": [("quest", QUEST)],
    "event_seasonal_quest_event": [("game_event", EVENT)],
    "event_prerequisites": [("game_event", EVE)],
    "event_prerequisite_event": [("game_event", EVENT)],
    "event_conditions": [("game_event", EVENT)],
    # spawns
    "creature_spawn_entry": [("creature", CREATURE)],
    "creature_spawn_phase": [("phase", PHASE)],
    "gameobject_spawn_entry": [("gameobject", LEVER)],
    "gameobject_spawn_phase": [("phase", PHASE)],
}

SYMBOLS: dict[str, str] = {
    "quest_addon_script_name": "quest_refmap_chain_start",
    "condition_script_name": "condition_refmap_breadcrumb",
    "spell_script_name": "spell_refmap_harness",
    "creature_script_name": "npc_refmap_harness_drake",
    "gameobject_script_name": "go_refmap_lever",
    "item_script_name": "item_refmap_token",
    "areatrigger_script_name": "at_refmap_gate",
    "creature_spawn_script_name": "npc_refmap_harness_drake_spawn",
    "gameobject_spawn_script_name": "go_refmap_lever_spawn",
}
