"""People's names for generated problems: Faker's en_US lists (``faker/providers/person/
en_US``, Faker 40.54.0), copied as data so that the package needs no Faker (its pytest plugin
cost every pytest run of a project that installs us 0.6 s of CPU) and every machine draws from
the same names. Each list is sorted; ``names.py`` reads them.

Faker's license, which covers these lists:

    Copyright (c) 2012 Daniele Faraglia

    Permission is hereby granted, free of charge, to any person obtaining a copy
    of this software and associated documentation files (the "Software"), to deal
    in the Software without restriction, including without limitation the rights
    to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
    copies of the Software, and to permit persons to whom the Software is
    furnished to do so, subject to the following conditions:

    The above copyright notice and this permission notice shall be included in
    all copies or substantial portions of the Software.

    THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
    IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
    FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
    AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
    LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
    OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN
    THE SOFTWARE.
"""

__all__ = ["FIRST_NAMES_FEMALE", "FIRST_NAMES_MALE", "LAST_NAMES"]


def _words(text: str) -> tuple[str, ...]:
    return tuple(text.split())


# fmt: off
FIRST_NAMES_FEMALE = _words("""
Abigail Adriana Adrienne Aimee Alejandra Alexa Alexandra Alexandria Alexis Alice Alicia Alisha
Alison Allison Alyssa Amanda Amber Amy Ana Andrea Angel Angela Angelica Angie Anita Ann Anna Anne
Annette April Ariana Ariel Ashlee Ashley Audrey Autumn Bailey Barbara Becky Belinda Beth Bethany
Betty Beverly Bianca Bonnie Brandi Brandy Breanna Brenda Briana Brianna Bridget Brittany Brittney
Brooke Caitlin Caitlyn Candace Candice Carla Carly Carmen Carol Caroline Carolyn Carrie Casey
Cassandra Cassidy Cassie Catherine Cathy Charlene Charlotte Chelsea Chelsey Cheryl Cheyenne Chloe
Christie Christina Christine Christy Cindy Claire Claudia Colleen Connie Courtney Cristina Crystal
Cynthia Daisy Dana Danielle Darlene Dawn Deanna Debbie Deborah Debra Denise Desiree Destiny Diamond
Diana Diane Dominique Donna Doris Dorothy Ebony Eileen Elaine Elizabeth Ellen Emily Emma Erica
Erika Erin Evelyn Faith Felicia Frances Gabriela Gabriella Gabrielle Gail Gina Glenda Gloria Grace
Gwendolyn Hailey Haley Hannah Hayley Heather Heidi Helen Holly Isabel Isabella Jackie Jaclyn
Jacqueline Jade Jaime Jamie Jane Janet Janice Jasmin Jasmine Jean Jeanette Jeanne Jenna Jennifer
Jenny Jessica Jill Jillian Jo Joan Joann Joanna Joanne Jocelyn Jodi Jody Jordan Joy Joyce Judith
Judy Julia Julie Kaitlin Kaitlyn Kara Karen Kari Karina Karla Katelyn Katherine Kathleen Kathryn
Kathy Katie Katrina Kayla Kaylee Kelli Kellie Kelly Kelsey Kendra Kerri Kerry Kiara Kim Kimberly
Kirsten Krista Kristen Kristi Kristie Kristin Kristina Kristine Kristy Krystal Kylie Lacey Latasha
Latoya Laura Lauren Laurie Leah Leslie Linda Lindsay Lindsey Lisa Loretta Lori Lorraine Lydia Lynn
Mackenzie Madeline Madison Makayla Mallory Mandy Marcia Margaret Maria Mariah Marie Marilyn Marisa
Marissa Martha Mary Maureen Mckenzie Meagan Megan Meghan Melanie Melinda Melissa Melody Mercedes
Meredith Mia Michaela Michele Michelle Mikayla Mindy Miranda Misty Molly Monica Monique Morgan
Nancy Natalie Natasha Nichole Nicole Nina Norma Olivia Paige Pam Pamela Patricia Patty Paula Peggy
Penny Phyllis Priscilla Rachael Rachel Raven Rebecca Rebekah Regina Renee Rhonda Rita Roberta Robin
Robyn Rose Ruth Sabrina Sally Samantha Sandra Sandy Sara Sarah Savannah Selena Shannon Shari Sharon
Shawna Sheena Sheila Shelby Shelia Shelley Shelly Sheri Sherri Sherry Sheryl Shirley Sierra Sonia
Sonya Sophia Stacey Stacie Stacy Stefanie Stephanie Sue Summer Susan Suzanne Sydney Sylvia Tabitha
Tamara Tami Tammie Tammy Tanya Tara Tasha Taylor Teresa Terri Terry Theresa Tiffany Tina Toni Tonya
Tracey Traci Tracie Tracy Tricia Valerie Vanessa Veronica Vicki Vickie Victoria Virginia Wanda
Wendy Whitney Yesenia Yolanda Yvette Yvonne Zoe
""")

FIRST_NAMES_MALE = _words("""
Aaron Adam Adrian Alan Albert Alec Alejandro Alex Alexander Alexis Alfred Allen Alvin Andre Andres
Andrew Angel Anthony Antonio Arthur Austin Barry Benjamin Bernard Bill Billy Blake Bob Bobby Brad
Bradley Brady Brandon Brendan Brent Brett Brian Bruce Bryan Bryce Caleb Calvin Cameron Carl Carlos
Casey Cesar Chad Charles Chase Chris Christian Christopher Clarence Clayton Clifford Clinton Cody
Cole Colin Collin Colton Connor Corey Cory Craig Cristian Curtis Dakota Dale Dalton Damon Dan
Daniel Danny Darin Darius Darrell Darren Darryl Daryl Dave David Dean Dennis Derek Derrick Devin
Devon Dillon Dominic Don Donald Douglas Drew Duane Dustin Dwayne Dylan Earl Eddie Edgar Eduardo
Edward Edwin Elijah Eric Erik Ernest Ethan Eugene Evan Fernando Francis Francisco Frank Franklin
Fred Frederick Gabriel Garrett Gary Gavin Gene Geoffrey George Gerald Gilbert Glen Glenn Gordon
Grant Greg Gregg Gregory Guy Harold Harry Hayden Hector Henry Herbert Howard Hunter Ian Isaac
Isaiah Ivan Jack Jackson Jacob Jaime Jake James Jamie Jared Jason Javier Jay Jeff Jeffery Jeffrey
Jeremiah Jeremy Jermaine Jerome Jerry Jesse Jesus Jim Jimmy Joe Joel John Johnathan Johnny Jon
Jonathan Jonathon Jordan Jorge Jose Joseph Joshua Juan Julian Justin Karl Keith Kelly Kenneth Kent
Kerry Kevin Kirk Kristopher Kurt Kyle Lance Larry Lawrence Lee Leon Leonard Leroy Leslie Levi Logan
Lonnie Louis Lucas Luis Luke Malik Manuel Marc Marco Marcus Mario Mark Martin Marvin Mason Mathew
Matthew Maurice Max Maxwell Melvin Michael Micheal Miguel Mike Mitchell Nathan Nathaniel Neil
Nicholas Nicolas Noah Norman Omar Oscar Parker Patrick Paul Pedro Perry Peter Philip Phillip
Preston Ralph Randall Randy Ray Raymond Reginald Ricardo Richard Rick Rickey Ricky Riley Robert
Roberto Rodney Roger Ronald Ronnie Ross Roy Ruben Russell Ryan Samuel Scott Sean Sergio Seth Shane
Shannon Shaun Shawn Spencer Stanley Stephen Steve Steven Stuart Tanner Taylor Terrance Terrence
Terry Theodore Thomas Tim Timothy Todd Tom Tommy Tony Tracy Travis Trevor Tristan Troy Tyler Tyrone
Vernon Victor Vincent Walter Warren Wayne Wesley William Willie Wyatt Xavier Zachary
""")

LAST_NAMES = _words("""
Abbott Acevedo Acosta Adams Adkins Aguilar Aguirre Alexander Ali Allen Allison Alvarado Alvarez
Andersen Anderson Andrade Andrews Anthony Archer Arellano Arias Armstrong Arnold Arroyo Ashley
Atkins Atkinson Austin Avery Avila Ayala Ayers Bailey Baird Baker Baldwin Ball Ballard Banks
Barajas Barber Barker Barnes Barnett Barr Barrera Barrett Barron Barry Bartlett Barton Bass Bates
Bauer Bautista Baxter Bean Beard Beasley Beck Becker Bell Beltran Bender Benitez Benjamin Bennett
Benson Bentley Benton Berg Berger Bernard Berry Best Bird Bishop Black Blackburn Blackwell Blair
Blake Blanchard Blankenship Blevins Bolton Bond Bonilla Booker Boone Booth Bowen Bowers Bowman Boyd
Boyer Boyle Bradford Bradley Bradshaw Brady Branch Brandt Braun Bray Brennan Brewer Bridges Briggs
Bright Brock Brooks Brown Browning Bruce Bryan Bryant Buchanan Buck Buckley Bullock Burch Burgess
Burke Burnett Burns Burton Bush Butler Byrd Cabrera Cain Calderon Caldwell Calhoun Callahan Camacho
Cameron Campbell Campos Cannon Cantrell Cantu Cardenas Carey Carlson Carney Carpenter Carr Carrillo
Carroll Carson Carter Case Casey Castaneda Castillo Castro Cervantes Chambers Chan Chandler Chaney
Chang Chapman Charles Chase Chavez Chen Cherry Choi Christensen Christian Chung Church Cisneros
Clark Clarke Clay Clayton Clements Cline Cobb Cochran Coffey Cohen Cole Coleman Collier Collins
Colon Combs Compton Conley Conner Conrad Contreras Conway Cook Cooke Cooley Cooper Copeland Cordova
Cortez Costa Cowan Cox Craig Crane Crawford Crosby Cross Cruz Cuevas Cummings Cunningham Curry
Curtis Dalton Daniel Daniels Daugherty Davenport David Davidson Davies Davila Davis Dawson Day Dean
Decker Delacruz Deleon Delgado Dennis Diaz Dickerson Dickson Dillon Dixon Dodson Dominguez
Donaldson Donovan Dorsey Dougherty Douglas Downs Doyle Drake Duarte Dudley Duffy Duke Duncan Dunlap
Dunn Duran Durham Dyer Eaton Edwards Elliott Ellis Ellison English Erickson Escobar Esparza
Espinoza Estes Estrada Evans Everett Ewing Farley Farmer Farrell Faulkner Ferguson Fernandez
Ferrell Fields Figueroa Finley Fischer Fisher Fitzgerald Fitzpatrick Fleming Fletcher Flores
Flowers Floyd Flynn Foley Forbes Ford Foster Fowler Fox Francis Franco Frank Franklin Frazier
Frederick Freeman French Frey Friedman Fritz Frost Fry Frye Fuentes Fuller Gaines Gallagher
Gallegos Galloway Galvan Gamble Garcia Gardner Garner Garrett Garrison Garza Gates Gay Gentry
George Gibbs Gibson Gilbert Giles Gill Gillespie Gilmore Glass Glenn Glover Golden Gomez Gonzales
Gonzalez Good Goodman Goodwin Gordon Gould Graham Grant Graves Gray Green Greene Greer Gregory
Griffin Griffith Grimes Gross Guerra Guerrero Gutierrez Guzman Haas Hahn Hale Haley Hall Hamilton
Hammond Hampton Hancock Haney Hanna Hansen Hanson Hardin Harding Hardy Harmon Harper Harrell
Harrington Harris Harrison Hart Hartman Harvey Hatfield Hawkins Hayden Hayes Haynes Hays Heath
Hebert Henderson Hendricks Hendrix Henry Hensley Henson Herman Hernandez Herrera Herring Hess
Hester Hickman Hicks Higgins Hill Hines Hinton Ho Hobbs Hodge Hodges Hoffman Hogan Holden Holder
Holland Holloway Holmes Holt Hood Hooper Hoover Hopkins Horn Horne Horton House Houston Howard Howe
Howell Huang Hubbard Huber Hudson Huerta Huff Huffman Hughes Hull Humphrey Hunt Hunter Hurley Hurst
Hutchinson Huynh Ibarra Ingram Irwin Jackson Jacobs Jacobson James Jarvis Jefferson Jenkins
Jennings Jensen Jimenez Johns Johnson Johnston Jones Jordan Joseph Joyce Juarez Kaiser Kane Kaufman
Keith Keller Kelley Kelly Kemp Kennedy Kent Kerr Key Khan Kidd Kim King Kirby Kirk Klein Kline
Knapp Knight Knox Koch Kramer Krause Krueger Lam Lamb Lambert Landry Lane Lang Lara Larsen Larson
Lawrence Lawson Le Leach Leblanc Lee Leon Leonard Lester Levine Levy Lewis Li Lin Lindsey Little
Liu Livingston Lloyd Logan Long Lopez Love Lowe Lowery Lozano Lucas Lucero Luna Lutz Lynch Lynn
Lyons Macdonald Macias Mack Madden Maddox Mahoney Maldonado Malone Mann Manning Marks Marquez Marsh
Marshall Martin Martinez Mason Massey Mata Mathews Mathis Matthews Maxwell May Mayer Maynard Mayo
Mays Mcbride Mccall Mccann Mccarthy Mccarty Mcclain Mcclure Mcconnell Mccormick Mccoy Mccullough
Mcdaniel Mcdonald Mcdowell Mcfarland Mcgee Mcgrath Mcguire Mcintosh Mcintyre Mckay Mckee Mckenzie
Mckinney Mcknight Mclaughlin Mclean Mcmahon Mcmillan Mcneil Mcpherson Meadows Medina Mejia Melendez
Melton Mendez Mendoza Mercado Mercer Merritt Meyer Meyers Meza Michael Middleton Miles Miller Mills
Miranda Mitchell Molina Monroe Montes Montgomery Montoya Moody Moon Mooney Moore Mora Morales Moran
Moreno Morgan Morris Morrison Morrow Morse Morton Moses Mosley Moss Moyer Mueller Mullen Mullins
Munoz Murillo Murphy Murray Myers Nash Navarro Neal Nelson Newman Newton Nguyen Nichols Nicholson
Nielsen Nixon Noble Nolan Norman Norris Norton Novak Nunez Obrien Ochoa Oconnell Oconnor Odom
Odonnell Oliver Olsen Olson Oneal Oneill Orozco Orr Ortega Ortiz Osborn Osborne Owen Owens Pace
Pacheco Padilla Page Palmer Park Parker Parks Parrish Parsons Patel Patrick Patterson Patton Paul
Payne Pearson Peck Pena Pennington Perez Perkins Perry Peters Petersen Peterson Petty Pham Phelps
Phillips Pierce Pineda Pittman Pitts Pollard Ponce Poole Pope Porter Potter Potts Powell Powers
Pratt Preston Price Prince Proctor Pruitt Pugh Quinn Ramirez Ramos Ramsey Randall Randolph Rangel
Rasmussen Ray Raymond Reed Reese Reeves Reid Reilly Reyes Reynolds Rhodes Rice Rich Richard
Richards Richardson Richmond Riddle Riggs Riley Rios Ritter Rivas Rivera Rivers Roach Robbins
Roberson Roberts Robertson Robinson Robles Rocha Rodgers Rodriguez Rogers Rojas Rollins Roman
Romero Rosales Rosario Rose Ross Roth Rowe Rowland Roy Rubio Ruiz Rush Russell Russo Ryan Salas
Salazar Salinas Sampson Sanchez Sanders Sandoval Sanford Santana Santiago Santos Saunders Savage
Sawyer Schaefer Schmidt Schmitt Schneider Schroeder Schultz Schwartz Scott Sellers Serrano Sexton
Shaffer Shah Shannon Sharp Shaw Shea Shelton Shepard Shepherd Sheppard Sherman Shields Short Silva
Simmons Simon Simpson Sims Singh Singleton Skinner Sloan Small Smith Snow Snyder Solis Solomon Sosa
Soto Sparks Spears Spence Spencer Stafford Stanley Stanton Stark Steele Stein Stephens Stephenson
Stevens Stevenson Stewart Stokes Stone Stout Strickland Strong Stuart Suarez Sullivan Summers
Sutton Swanson Sweeney Tanner Tapia Tate Taylor Terrell Terry Thomas Thompson Thornton Todd Torres
Townsend Tran Travis Trevino Trujillo Tucker Turner Tyler Underwood Valdez Valencia Valentine
Valenzuela Vance Vang Vargas Vasquez Vaughan Vaughn Vazquez Vega Velasquez Velazquez Velez Villa
Villanueva Villarreal Villegas Vincent Wade Wagner Walker Wall Wallace Waller Walls Walsh Walter
Walters Walton Wang Ward Ware Warner Warren Washington Waters Watkins Watson Watts Weaver Webb
Weber Webster Weeks Weiss Welch Wells Werner West Wheeler Whitaker White Whitehead Whitney Wiggins
Wilcox Wiley Wilkerson Wilkins Wilkinson Williams Williamson Willis Wilson Winters Wise Wolf Wolfe
Wong Wood Woodard Woods Woodward Wright Wu Wyatt Yang Yates Yoder York Young Yu Zamora Zavala Zhang
Zimmerman Zuniga
""")
# fmt: on
